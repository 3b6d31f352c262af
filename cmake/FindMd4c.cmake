# Finds md4c (the CommonMark parser markdown answers are read with) and defines Md4c::Md4c.
# Looks in the usual places and in CMAKE_PREFIX_PATH (e.g. Debian packages unpacked into a prefix).
find_path(Md4c_INCLUDE_DIR md4c.h)
find_library(Md4c_LIBRARY NAMES md4c libmd4c.so.0)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Md4c REQUIRED_VARS Md4c_LIBRARY Md4c_INCLUDE_DIR)
if(Md4c_FOUND AND NOT TARGET Md4c::Md4c)
  add_library(Md4c::Md4c UNKNOWN IMPORTED)
  set_target_properties(Md4c::Md4c PROPERTIES IMPORTED_LOCATION "${Md4c_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Md4c_INCLUDE_DIR}")
endif()
mark_as_advanced(Md4c_INCLUDE_DIR Md4c_LIBRARY)
