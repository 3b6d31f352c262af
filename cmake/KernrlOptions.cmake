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

# kernrl_warnings: the one warning set, an interface target that every kernrl target links -- the
# programs and libraries, the worker's torch code, the references, the tests and the fuzz targets
# alike -- through kernrl_warnings(TARGET). Errors with KERNRL_WERROR (the ci and gpu presets).
# Third-party headers (libtorch, CUDA, doctest, Boost.Beast, nlohmann/json, yaml-cpp, md4c) come
# in as system headers (-isystem, or the system's include directory), which no warning reaches.
# The top-level CMakeLists.txt refuses to configure a target that does not link it.
# -Wmissing-declarations (a function with external linkage that no header declares) everywhere but
# in a target whose KERNRL_UNDECLARED_FUNCTIONS property is ON: the references, whose functions
# each problem's file defines in a namespace of its own and registers with a static registrar.
set(KERNRL_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wformat -Wformat-security -Wimplicit-fallthrough)
add_library(kernrl_warnings INTERFACE)
target_compile_options(kernrl_warnings INTERFACE ${KERNRL_WARNING_FLAGS}
  $<$<NOT:$<BOOL:$<TARGET_PROPERTY:KERNRL_UNDECLARED_FUNCTIONS>>>:-Wmissing-declarations>
  $<$<BOOL:${KERNRL_WERROR}>:-Werror>)
function(kernrl_warnings target)
  target_link_libraries(${target} PRIVATE kernrl_warnings)
endfunction()

# kernrl_check_warnings(DIR): every target that compiles code, in DIR and below, links
# kernrl_warnings; configuring fails naming any that does not.
function(kernrl_check_warnings dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      get_target_property(libs ${t} LINK_LIBRARIES)
      if(NOT "kernrl_warnings" IN_LIST libs)
        message(FATAL_ERROR "target ${t} (${dir}) does not link kernrl_warnings: call "
                            "kernrl_warnings(${t}) beside it (cmake/KernrlOptions.cmake)")
      endif()
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d IN LISTS subdirs)
    kernrl_check_warnings(${d})
  endforeach()
endfunction()
