#include "util/lazy_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

// The sonames CMakeLists.txt read from the libraries it found (file(READ_ELF)),
// so the library loaded is the one the headers were compiled against.
#if !defined(MCPCELL_SONAME_NFTABLES) || !defined(MCPCELL_SONAME_LDNS) || !defined(MCPCELL_SONAME_HS) || \
    !defined(MCPCELL_SONAME_NETTLE) || !defined(MCPCELL_SONAME_YAML)
#error "CMakeLists.txt defines the MCPCELL_SONAME_* of the lazily loaded libraries"
#endif
static_assert(sizeof(MCPCELL_SONAME_NFTABLES) > 1 && sizeof(MCPCELL_SONAME_LDNS) > 1 && sizeof(MCPCELL_SONAME_HS) > 1 &&
              sizeof(MCPCELL_SONAME_NETTLE) > 1 && sizeof(MCPCELL_SONAME_YAML) > 1);

namespace mcpcell {
namespace {

// stderr with write(2): may run in the cell's PID 1, after fork.
void SayAndAbort(const std::string& line) {
  std::string text = "mcpcell: " + line + "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
  std::abort();
}

}  // namespace

LazyLibrary::LazyLibrary(const char* soname, const char* package) : soname_(soname), package_(package) {
  handle_ = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = ::dlerror();
    error_ = why != nullptr ? why : "dlopen failed";
  }
}

Status LazyLibrary::Load() const {
  if (handle_ != nullptr) return {};
  return MakeError("load shared library", soname_, error_ + "; install the Debian package " + package_);
}

void* LazyLibrary::Symbol(const char* symbol) const {
  if (auto ok = Load(); !ok) SayAndAbort(ok.error().Message());
  ::dlerror();
  void* address = ::dlsym(handle_, symbol);
  if (address == nullptr) {
    SayAndAbort(std::string(soname_) + " has no " + symbol + " (package " + package_ + " too old or too new?)");
  }
  return address;
}

const LazyLibrary& LazyNftables() {
  static const LazyLibrary lib(MCPCELL_SONAME_NFTABLES, "libnftables1");
  return lib;
}

const LazyLibrary& LazyLdns() {
  static const LazyLibrary lib(MCPCELL_SONAME_LDNS, "libldns3");
  return lib;
}

const LazyLibrary& LazyHs() {
  static const LazyLibrary lib(MCPCELL_SONAME_HS, "libvectorscan5");
  return lib;
}

const LazyLibrary& LazyNettle() {
  static const LazyLibrary lib(MCPCELL_SONAME_NETTLE, "libnettle8");
  return lib;
}

const LazyLibrary& LazyYaml() {
  static const LazyLibrary lib(MCPCELL_SONAME_YAML, "libyaml-0-2");
  return lib;
}

}  // namespace mcpcell
