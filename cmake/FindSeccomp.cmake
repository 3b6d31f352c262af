# Finds libseccomp (the compiler sandbox's system-call filter) and defines Seccomp::Seccomp.
# Looks in the usual places and in CMAKE_PREFIX_PATH (e.g. Debian packages unpacked into a prefix).
find_path(Seccomp_INCLUDE_DIR seccomp.h)
find_library(Seccomp_LIBRARY NAMES seccomp libseccomp.so.2)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Seccomp REQUIRED_VARS Seccomp_LIBRARY Seccomp_INCLUDE_DIR)
if(Seccomp_FOUND AND NOT TARGET Seccomp::Seccomp)
  add_library(Seccomp::Seccomp UNKNOWN IMPORTED)
  set_target_properties(Seccomp::Seccomp PROPERTIES IMPORTED_LOCATION "${Seccomp_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Seccomp_INCLUDE_DIR}")
endif()
mark_as_advanced(Seccomp_INCLUDE_DIR Seccomp_LIBRARY)
