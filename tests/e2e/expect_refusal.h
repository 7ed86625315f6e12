/// \file
/// A check of the end-to-end tests that a call is refused: it must throw
/// aotc::Error, with a given status if one is asked for, and a message that
/// contains every given fragment. Used as
///   EXPECT_TRUE(refused([&] { m.run(in); }, {"node 'pick'"},
///                       AOTC_ERROR_INVALID_ARGUMENT)) << "context";
/// Exceptions of other types propagate (gtest reports them).
#pragma once

#include <aotc/runner.hpp>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace aotc::e2e {

/// The status argument of refused() that accepts any status.
inline constexpr int kAnyStatus = -1;

/// Success when \p call throws aotc::Error whose status is \p status (any,
/// for kAnyStatus) and whose message contains each of \p fragments; a
/// failure naming what differs otherwise ("accepted" when it returns).
template <typename F>
::testing::AssertionResult refused(F &&call,
                                   std::initializer_list<std::string> fragments,
                                   int status = kAnyStatus) {
  try {
    call();
  } catch (const aotc::Error &e) {
    std::string what = e.what();
    if (status != kAnyStatus && static_cast<int>(e.status()) != status)
      return ::testing::AssertionFailure()
             << "refused with status " << static_cast<int>(e.status())
             << ", expected status " << status << ": " << what;
    for (const std::string &fragment : fragments)
      if (what.find(fragment) == std::string::npos)
        return ::testing::AssertionFailure()
               << "the message does not contain \"" << fragment
               << "\": " << what;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "accepted";
}

} // namespace aotc::e2e
