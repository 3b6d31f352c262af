# Language level, build type, options and the warning set every kernrl target uses.
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()

option(KERNRL_BUILD_TESTS "Build the test suites" ON)
# A separate build (clang) of the parsers' libFuzzer targets only: no CUDA, no torch, no CLI.
# scripts/fuzz.sh configures and runs it.
option(KERNRL_FUZZ "Build only the libFuzzer targets of the parsers (tests/fuzz; needs clang)" OFF)
option(KERNRL_WERROR "Treat compiler warnings as errors (the CI preset turns this on)" OFF)
set(KERNRL_PROBLEM_GLOB "L*/*" CACHE STRING
    "Problem folders whose references are built, a ;-list of globs (e.g. L1/*)")

# kernrl_warnings(TARGET): the warnings of kernrl's own code (not of third-party headers, which
# are included as system headers by their imported targets).
set(KERNRL_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wformat -Wformat-security -Wimplicit-fallthrough -Wmissing-declarations)
function(kernrl_warnings target)
  target_compile_options(${target} PRIVATE ${KERNRL_WARNING_FLAGS})
  if(KERNRL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
