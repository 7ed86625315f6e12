/// \file
/// float16 conversions for the compiler: the public header's, so that the
/// compiler and host applications round alike.
#pragma once

#include "runtime/include/aotc/half.hpp"
