#include "cell/cell.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace mcpcell {

Result<StopRequest> StopRequest::Make() {
  StopRequest s;
  s.fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!s.fd_) return ErrnoError("create the eventfd a cell's stop request uses");
  return s;
}

void StopRequest::Request(std::chrono::milliseconds grace) {
  grace_ms_->store(grace.count());
  std::uint64_t one = 1;
  (void)!::write(fd_.get(), &one, sizeof one);  // a full counter (2^64-2 requests) is still readable
}

}  // namespace mcpcell
