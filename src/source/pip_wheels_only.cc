#include "source/pip_wheels_only.h"

#include "util/sealed_memfd.h"

namespace mcpcell {
namespace {

// Loads pip from argv[1] only (as pip's own __pip-runner__.py does for
// --python: no other package of the host becomes visible, or pip would take
// the host's for installed and leave them out of the venv), wraps the
// preparer's entry points, then runs pip with argv[2:]. The refusal names
// the link without its credentials (pip's redacted_url).
constexpr const char kProgram[] = R"PY(
import sys
from importlib.machinery import PathFinder
ROOT = sys.argv[1]
class PipOnly:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != "pip":
            return None
        return PathFinder.find_spec(fullname, [ROOT], target)
sys.meta_path.insert(0, PipOnly)
try:
    from pip._internal.exceptions import InstallationError
    from pip._internal.operations.prepare import RequirementPreparer as P
    names = ("prepare_linked_requirement", "_prepare_linked_requirement", "prepare_editable_requirement")
    originals = {n: getattr(P, n) for n in names}
except Exception as e:
    sys.stderr.write("mcpcell: this pip's internals are not the ones mcpcell guards (%r); "
                     "refusing to run it, as it could build a source distribution on this host\n" % (e,))
    sys.exit(3)
def refuse(req):
    link = getattr(req, "link", None)
    where = link.redacted_url if link is not None else "no link"
    raise InstallationError(
        "mcpcell: refusing %s (%s): not a wheel. A direct reference to a source distribution, "
        "a VCS repository or a directory would run its build code on this host, outside any cell; "
        "uvx:// installs wheels only" % (getattr(req, "name", None) or req, where))
def guard(original):
    def wheels_only(self, req, *args, **kwargs):
        link = getattr(req, "link", None)
        if link is None or not link.is_wheel or getattr(req, "editable", False):
            refuse(req)
        return original(self, req, *args, **kwargs)
    return wheels_only
for n in names[:2]:
    setattr(P, n, guard(originals[n]))
def no_editable(self, req, *args, **kwargs):
    refuse(req)
P.prepare_editable_requirement = no_editable
sys.argv = ["pip"] + sys.argv[2:]
import runpy
runpy.run_module("pip", run_name="__main__", alter_sys=True)
)PY";

}  // namespace

const char* const kPipRootProgram =
    "import os, pip; print(os.path.dirname(os.path.dirname(os.path.realpath(pip.__file__))))";

Result<WheelsOnlyPip> WheelsOnlyPipRun(const std::string& python, const std::string& pip_root,
                                       const std::vector<std::string>& pip_args) {
  auto program = SealedMemfd("mcpcell-pip-wheels-only", kProgram);
  if (!program.ok()) return program.error();
  WheelsOnlyPip run;
  // -I: no user site, no PYTHON* variables, and (3.11's -P) not the
  // script's directory on sys.path.
  run.argv = {python, "-I", OwnFdPath(program->get()), pip_root};
  run.argv.insert(run.argv.end(), pip_args.begin(), pip_args.end());
  run.program = std::move(*program);
  return run;
}

}  // namespace mcpcell
