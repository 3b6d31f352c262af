# Every third-party dependency, found once. The parsers (and their fuzz build) need only the first
# group; the full build adds the CLI parser, CUDA, libtorch and libseccomp.
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 for source hashes and the compile cache
find_package(Threads REQUIRED)
# md4c (CommonMark, for markdown answers): cmake/FindMd4c.cmake, because Debian's md4cConfig.cmake
# also demands libmd4c-html, which kernrl does not use.
find_package(Md4c REQUIRED)

# The yaml-cpp package names its target differently across versions.
if(TARGET yaml-cpp::yaml-cpp)
  set(KERNRL_YAML yaml-cpp::yaml-cpp)
else()
  set(KERNRL_YAML yaml-cpp)
endif()

if(KERNRL_FUZZ)
  return()
endif()

find_package(CLI11 REQUIRED)
find_package(CUDAToolkit REQUIRED)  # NVRTC, the driver API, cuBLAS
find_package(Torch REQUIRED)        # references; Debian 1.13 (CPU) or 2.x from the torch wheel (CUDA)
find_package(Seccomp REQUIRED)      # the compiler's sandbox (cmake/FindSeccomp.cmake)

# libtorch with CUDA: the GPU worker can be built. Without it (CPU machines) kernrl still lists,
# shows, parses, compiles and reports; `eval` then says plainly that nothing ran.
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(KERNRL_HAVE_TORCH_CUDA ON)
else()
  set(KERNRL_HAVE_TORCH_CUDA OFF)
endif()
message(STATUS "kernrl: GPU worker ${KERNRL_HAVE_TORCH_CUDA} (torch ${Torch_VERSION})")

set(KERNRL_CUDA_INCLUDE "${CUDAToolkit_INCLUDE_DIRS}")
list(GET KERNRL_CUDA_INCLUDE 0 KERNRL_CUDA_INCLUDE)
