#pragma once
// Include first in every file that uses Asio coroutines. The pragmas stay in
// force for the rest of the including file, on purpose: GCC 12's warnings
// below fire after inlining, at the end of the translation unit.
//
// GCC 12 reports -Wnull-dereference inside asio's scheduler after inlining
// (boost/asio/detail/impl/scheduler.ipp); the pointer is never null there.
#pragma GCC diagnostic ignored "-Wnull-dereference"
// GCC 12 also pairs asio's coroutine-frame operator new/delete wrongly after
// inlining (-Wmismatched-new-delete); both are asio's own recycling allocator.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// Boost 1.74's asio/awaitable.hpp uses std::exchange without including it.
#include <utility>
