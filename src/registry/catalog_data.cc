// The bundled registry catalog, compiled into the binary. Format: docs/REGISTRY.md.
// Every version is a real published one (checked with `npm view PKG version`).
#include "registry/catalog.h"

namespace mcpcell {
namespace {
constexpr std::string_view kCatalog = R"catalog({
  "version": "1",
  "last_updated": "2026-09-01",
  "servers": {
    "filesystem": {
      "description": "Read, write, search and edit files inside the directories given as arguments",
      "source": "npx://@modelcontextprotocol/server-filesystem@2026.8.31",
      "tier": "official",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers",
      "usage": "DIR... (each directory is bound read-write into the cell)",
      "tags": [
        "files"
      ],
      "permissions": {},
      "path_args": "write"
    },
    "memory": {
      "description": "Knowledge-graph memory kept in a JSON file",
      "source": "npx://@modelcontextprotocol/server-memory@2026.8.31",
      "tier": "official",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers",
      "tags": [
        "memory"
      ],
      "env_vars": [
        {
          "name": "MEMORY_FILE_PATH",
          "description": "Where the graph is stored (default: inside the package directory, read-only in a cell; point it at a --write path)",
          "required": false,
          "secret": false
        }
      ],
      "permissions": {}
    },
    "everything": {
      "description": "Reference server exercising every MCP feature (tools, resources, prompts, sampling)",
      "source": "npx://@modelcontextprotocol/server-everything@2026.8.31",
      "tier": "official",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers",
      "tags": [
        "test"
      ],
      "permissions": {}
    },
    "sequential-thinking": {
      "description": "Structured step-by-step problem solving",
      "source": "npx://@modelcontextprotocol/server-sequential-thinking@2026.8.31",
      "tier": "official",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers",
      "tags": [
        "reasoning"
      ],
      "permissions": {}
    },
    "github": {
      "description": "GitHub repositories, issues and pull requests (archived; GitHub's own server replaces it)",
      "source": "npx://@modelcontextprotocol/server-github@2025.4.8",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "git",
        "github"
      ],
      "env_vars": [
        {
          "name": "GITHUB_PERSONAL_ACCESS_TOKEN",
          "description": "GitHub token",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.github.com",
              "github.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "puppeteer": {
      "description": "Browser automation with Puppeteer (archived)",
      "source": "npx://@modelcontextprotocol/server-puppeteer@2025.5.12",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "browser"
      ],
      "env_vars": [
        {
          "name": "PUPPETEER_LAUNCH_OPTIONS",
          "description": "Puppeteer launch options (JSON): Debian's Chromium, headless, its own sandbox off",
          "required": false,
          "secret": false,
          "default": "{\"headless\": true, \"executablePath\": \"/usr/lib/chromium/chromium\", \"args\": [\"--no-sandbox\"]}"
        },
        {
          "name": "ALLOW_DANGEROUS",
          "description": "The server refuses --no-sandbox unless this is true",
          "required": false,
          "secret": false,
          "default": "true"
        }
      ],
      "requires_paths": ["/usr/lib/chromium/chromium"],
      "requires_hint": "install Debian's chromium: apt-get install --no-install-recommends chromium",
      "notice": "Chromium runs with its own sandbox off (--no-sandbox): its namespace sandbox needs new user namespaces, which the cell refuses to every process in it (seccomp), and its setuid helper cannot work under nosuid and no_new_privs. A page that exploits the renderer gets this server's rights in the cell (its grants, its network) and no more: the cell is the sandbox. Needs Debian's chromium package (/usr/lib/chromium/chromium). See docs/THREAT_MODEL.md, Browser servers.",
      "permissions": {
        "network": {
          "outbound": {
            "insecure_allow_all": true
          }
        }
      }
    },
    "brave-search": {
      "description": "Web and local search through the Brave Search API (archived)",
      "source": "npx://@modelcontextprotocol/server-brave-search@0.6.2",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "search"
      ],
      "env_vars": [
        {
          "name": "BRAVE_API_KEY",
          "description": "Brave Search API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.search.brave.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "slack": {
      "description": "Slack channels and messages (archived)",
      "source": "npx://@modelcontextprotocol/server-slack@2025.4.25",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "chat"
      ],
      "env_vars": [
        {
          "name": "SLACK_BOT_TOKEN",
          "description": "Bot token (xoxb-...)",
          "required": true,
          "secret": true
        },
        {
          "name": "SLACK_TEAM_ID",
          "description": "Workspace id",
          "required": true,
          "secret": false
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "slack.com",
              ".slack.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "google-maps": {
      "description": "Geocoding, places and directions through Google Maps (archived)",
      "source": "npx://@modelcontextprotocol/server-google-maps@0.6.2",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "maps"
      ],
      "env_vars": [
        {
          "name": "GOOGLE_MAPS_API_KEY",
          "description": "Google Maps API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "maps.googleapis.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "postgres": {
      "description": "Read-only SQL against a PostgreSQL database (archived)",
      "source": "npx://@modelcontextprotocol/server-postgres@0.6.2",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "usage": "postgresql://USER@HOST/DB (put the password in a secret, not in argv)",
      "tags": [
        "database"
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [],
            "allow_port": [
              5432
            ]
          }
        }
      }
    },
    "gdrive": {
      "description": "Search and read Google Drive files (archived)",
      "source": "npx://@modelcontextprotocol/server-gdrive@2025.1.14",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "files",
        "google"
      ],
      "env_vars": [
        {
          "name": "GDRIVE_CREDENTIALS_PATH",
          "description": "OAuth credentials file",
          "required": true,
          "secret": false
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              ".googleapis.com",
              "oauth2.googleapis.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "redis": {
      "description": "Redis key-value access (archived)",
      "source": "npx://@modelcontextprotocol/server-redis@2025.4.25",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "usage": "redis://HOST:PORT",
      "tags": [
        "database"
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [],
            "allow_port": [
              6379
            ]
          }
        }
      }
    },
    "everart": {
      "description": "Image generation through EverArt (archived)",
      "source": "npx://@modelcontextprotocol/server-everart@0.6.2",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "images"
      ],
      "env_vars": [
        {
          "name": "EVERART_API_KEY",
          "description": "EverArt API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.everart.ai"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "aws-kb-retrieval": {
      "description": "Retrieval from AWS Bedrock knowledge bases (archived)",
      "source": "npx://@modelcontextprotocol/server-aws-kb-retrieval@0.6.2",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "aws"
      ],
      "env_vars": [
        {
          "name": "AWS_ACCESS_KEY_ID",
          "description": "AWS access key id",
          "required": true,
          "secret": true
        },
        {
          "name": "AWS_SECRET_ACCESS_KEY",
          "description": "AWS secret key",
          "required": true,
          "secret": true
        },
        {
          "name": "AWS_REGION",
          "description": "AWS region",
          "required": true,
          "secret": false
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              ".amazonaws.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "gitlab": {
      "description": "GitLab projects, issues and merge requests (archived)",
      "source": "npx://@modelcontextprotocol/server-gitlab@2025.4.25",
      "tier": "official",
      "status": "deprecated",
      "transport": "stdio",
      "repository_url": "https://github.com/modelcontextprotocol/servers-archived",
      "tags": [
        "git"
      ],
      "env_vars": [
        {
          "name": "GITLAB_PERSONAL_ACCESS_TOKEN",
          "description": "GitLab token",
          "required": true,
          "secret": true
        },
        {
          "name": "GITLAB_API_URL",
          "description": "API URL for self-hosted GitLab",
          "required": false,
          "secret": false
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "gitlab.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "playwright": {
      "description": "Browser automation with Playwright (Microsoft)",
      "source": "npx://@playwright/mcp@0.0.83",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/microsoft/playwright-mcp",
      "tags": [
        "browser"
      ],
      "env_vars": [
        {"name": "PLAYWRIGHT_MCP_BROWSER", "description": "Browser (chromium: Debian's, not a download)", "required": false, "secret": false, "default": "chromium"},
        {"name": "PLAYWRIGHT_MCP_EXECUTABLE_PATH", "description": "The browser binary (the real one: Debian's /usr/bin/chromium wrapper reads /etc/chromium.d, not in the cell)", "required": false, "secret": false, "default": "/usr/lib/chromium/chromium"},
        {"name": "PLAYWRIGHT_MCP_HEADLESS", "description": "No display in the cell", "required": false, "secret": false, "default": "true"},
        {"name": "PLAYWRIGHT_MCP_SANDBOX", "description": "Chromium's own sandbox (cannot nest in a cell)", "required": false, "secret": false, "default": "false"}
      ],
      "requires_paths": ["/usr/lib/chromium/chromium"],
      "requires_hint": "install Debian's chromium: apt-get install --no-install-recommends chromium",
      "notice": "Chromium runs with its own sandbox off (--no-sandbox): its namespace sandbox needs new user namespaces, which the cell refuses to every process in it (seccomp), and its setuid helper cannot work under nosuid and no_new_privs. A page that exploits the renderer gets this server's rights in the cell (its grants, its network) and no more: the cell is the sandbox. Needs Debian's chromium package (/usr/lib/chromium/chromium). See docs/THREAT_MODEL.md, Browser servers.",
      "permissions": {
        "network": {
          "outbound": {
            "insecure_allow_all": true
          }
        }
      }
    },
    "chrome-devtools": {
      "description": "Control and inspect Chromium through the DevTools protocol (Google)",
      "source": "npx://chrome-devtools-mcp@1.11.0",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/ChromeDevTools/chrome-devtools-mcp",
      "tags": [
        "browser"
      ],
      "args": ["--headless", "--isolated", "--executablePath=/usr/lib/chromium/chromium", "--chromeArg=--no-sandbox",
               "--no-usage-statistics", "--no-performance-crux"],
      "env_vars": [
        {"name": "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS", "description": "No version check against npm at start", "required": false, "secret": false, "default": "1"}
      ],
      "requires_paths": ["/usr/lib/chromium/chromium"],
      "requires_hint": "install Debian's chromium: apt-get install --no-install-recommends chromium",
      "notice": "Chromium runs with its own sandbox off (--no-sandbox): its namespace sandbox needs new user namespaces, which the cell refuses to every process in it (seccomp), and its setuid helper cannot work under nosuid and no_new_privs. A page that exploits the renderer gets this server's rights in the cell (its grants, its network) and no more: the cell is the sandbox. Needs Debian's chromium package (/usr/lib/chromium/chromium). See docs/THREAT_MODEL.md, Browser servers.",
      "permissions": {
        "network": {
          "outbound": {
            "insecure_allow_all": true
          }
        }
      }
    },
    "context7": {
      "description": "Up-to-date library documentation for prompts (Upstash)",
      "source": "npx://@upstash/context7-mcp@4.1.1",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/upstash/context7",
      "tags": [
        "docs"
      ],
      "env_vars": [
        {
          "name": "CONTEXT7_API_KEY",
          "description": "API key for higher rate limits",
          "required": false,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "context7.com",
              ".context7.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "notion": {
      "description": "Notion pages and databases (Notion)",
      "source": "npx://@notionhq/notion-mcp-server@2.5.2",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/makenotion/notion-mcp-server",
      "tags": [
        "notes"
      ],
      "env_vars": [
        {
          "name": "NOTION_TOKEN",
          "description": "Notion integration token",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.notion.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "firecrawl": {
      "description": "Web scraping and crawling through Firecrawl",
      "source": "npx://firecrawl-mcp@3.26.0",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/firecrawl/firecrawl-mcp-server",
      "tags": [
        "web"
      ],
      "env_vars": [
        {
          "name": "FIRECRAWL_API_KEY",
          "description": "Firecrawl API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.firecrawl.dev"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "supabase": {
      "description": "Supabase projects, databases and functions (Supabase)",
      "source": "npx://@supabase/mcp-server-supabase@0.13.0",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/supabase-community/supabase-mcp",
      "tags": [
        "database"
      ],
      "env_vars": [
        {
          "name": "SUPABASE_ACCESS_TOKEN",
          "description": "Personal access token",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.supabase.com",
              ".supabase.co"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "sentry": {
      "description": "Sentry issues, events and releases (Sentry)",
      "source": "npx://@sentry/mcp-server@0.39.0",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/getsentry/sentry-mcp",
      "tags": [
        "monitoring"
      ],
      "env_vars": [
        {
          "name": "SENTRY_ACCESS_TOKEN",
          "description": "Sentry user auth token",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "sentry.io",
              ".sentry.io"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "tavily": {
      "description": "Web search and extraction through Tavily",
      "source": "npx://tavily-mcp@0.2.22",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/tavily-ai/tavily-mcp",
      "tags": [
        "search"
      ],
      "env_vars": [
        {
          "name": "TAVILY_API_KEY",
          "description": "Tavily API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.tavily.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "browserbase": {
      "description": "Cloud browser sessions through Browserbase",
      "source": "npx://@browserbasehq/mcp-server-browserbase@2.4.3",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/browserbase/mcp-server-browserbase",
      "tags": [
        "browser"
      ],
      "env_vars": [
        {
          "name": "BROWSERBASE_API_KEY",
          "description": "Browserbase API key",
          "required": true,
          "secret": true
        },
        {
          "name": "BROWSERBASE_PROJECT_ID",
          "description": "Project id",
          "required": true,
          "secret": false
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              ".browserbase.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "stripe": {
      "description": "Stripe payments API (Stripe)",
      "source": "npx://@stripe/mcp@0.3.3",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/stripe/agent-toolkit",
      "usage": "--tools=all",
      "tags": [
        "payments"
      ],
      "env_vars": [
        {
          "name": "STRIPE_SECRET_KEY",
          "description": "Stripe secret key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.stripe.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "heroku": {
      "description": "Heroku apps, dynos and add-ons (Heroku)",
      "source": "npx://@heroku/mcp-server@1.2.8",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/heroku/heroku-mcp-server",
      "tags": [
        "cloud"
      ],
      "env_vars": [
        {
          "name": "HEROKU_API_KEY",
          "description": "Heroku API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.heroku.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "exa": {
      "description": "Web search through Exa",
      "source": "npx://exa-mcp-server@3.4.1",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://github.com/exa-labs/exa-mcp-server",
      "tags": [
        "search"
      ],
      "env_vars": [
        {
          "name": "EXA_API_KEY",
          "description": "Exa API key",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.exa.ai"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    },
    "hubspot": {
      "description": "HubSpot CRM objects (HubSpot)",
      "source": "npx://@hubspot/mcp-server@0.4.0",
      "tier": "verified",
      "status": "active",
      "transport": "stdio",
      "repository_url": "https://developers.hubspot.com/mcp",
      "tags": [
        "crm"
      ],
      "env_vars": [
        {
          "name": "PRIVATE_APP_ACCESS_TOKEN",
          "description": "HubSpot private app token",
          "required": true,
          "secret": true
        }
      ],
      "permissions": {
        "network": {
          "outbound": {
            "allow_host": [
              "api.hubapi.com"
            ],
            "allow_port": [
              443
            ]
          }
        }
      }
    }
  }
})catalog";
}  // namespace

std::string_view BundledCatalogJson() { return kCatalog; }

}  // namespace mcpcell
