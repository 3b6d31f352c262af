# Install rules and the Debian package (CPack). Included from the top-level CMakeLists.txt after
# the targets are defined.
#
# Layout under the prefix (relocatable: everything is found relative to bin/kernrl, see
# src/core/paths.cpp):
#   bin/kernrl                       the command
#   libexec/kernrl/kernrl-nvrtc      the sandboxed compiler process
#   libexec/kernrl/kernrl-triton     the sandboxed Triton compiler process, and beside it
#   libexec/kernrl/kernrl_triton.py  the Python helper it runs (and its wrapper-plan modules:
#                                    wrapper_plan.py, shape_torch.py, shape_nn.py)
#   libexec/kernrl/kernrl_triton_server.py  the compile server that forks it per compile
#   libexec/kernrl/kernrl-worker     the GPU worker (when libtorch has CUDA)
#   share/kernrl/{problems,configs,baselines}
#   share/doc/kernrl/                README.md and docs/
include(GNUInstallDirs)

set(KERNRL_HELPER_DIR ${CMAKE_INSTALL_LIBEXECDIR}/kernrl)
install(TARGETS kernrl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(KERNRL_HELPERS kernrl-nvrtc kernrl-triton)
if(TARGET kernrl-worker)
  list(APPEND KERNRL_HELPERS kernrl-worker)
endif()
# The helpers link NVRTC (and libtorch) from wherever the CUDA Toolkit and torch are installed:
# keep those directories in the installed binaries' RPATH.
set_target_properties(${KERNRL_HELPERS} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS ${KERNRL_HELPERS} RUNTIME DESTINATION ${KERNRL_HELPER_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/src/triton/kernrl_triton.py
              ${PROJECT_SOURCE_DIR}/src/triton/kernrl_triton_server.py
              ${PROJECT_SOURCE_DIR}/src/triton/wrapper_plan.py
              ${PROJECT_SOURCE_DIR}/src/triton/shape_torch.py
              ${PROJECT_SOURCE_DIR}/src/triton/shape_nn.py DESTINATION ${KERNRL_HELPER_DIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/problems ${PROJECT_SOURCE_DIR}/configs
                  ${PROJECT_SOURCE_DIR}/baselines
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kernrl)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- Debian package: cpack -G DEB (in the build folder) ----
set(CPACK_PACKAGE_NAME kernrl)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Grades GPU kernels written by language models")
set(CPACK_PACKAGE_DESCRIPTION "kernrl compiles CUDA kernels with NVRTC in a sandbox, checks them \
on fresh random inputs against PyTorch references, times them, and reports pass@k, fast_p, \
speedups and rewards. It needs the CUDA Toolkit (NVRTC and headers) at run time.")
set(CPACK_PACKAGE_CONTACT "kernrl maintainers <kernrl@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Dependencies from the linked shared libraries (dpkg-shlibdeps). The CUDA Toolkit and libtorch are
# usually installed outside Debian's packages (/usr/local/cuda, a torch wheel): their libraries are
# required at run time but give no package dependency.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(KERNRL_PRIVATE_LIB_DIRS "")
foreach(dir IN LISTS CUDAToolkit_LIBRARY_DIR TORCH_INSTALL_PREFIX)
  if(dir)
    list(APPEND KERNRL_PRIVATE_LIB_DIRS ${dir} ${dir}/lib ${dir}/lib64)
  endif()
endforeach()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${KERNRL_PRIVATE_LIB_DIRS})
include(CPack)
