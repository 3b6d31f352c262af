# kernrl for GPU hosts: built on a CUDA + PyTorch image, against that image's libtorch (the GPU
# worker's references) and CUDA Toolkit (NVRTC and the headers kernels include).
#   docker build -t kernrl .
#   docker run --rm --gpus all -v "$PWD/runs:/work/runs" kernrl grade-dir runs/model-a
#   docker run --rm --gpus all -p 127.0.0.1:8000:8000 kernrl serve --host 0.0.0.0   (docs/serve.md)
# The base image must be a CUDA "devel" image: kernrl compiles kernels at run time with NVRTC and
# the toolkit's headers.
ARG BASE=pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel

FROM ${BASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build libcli11-dev \
      libyaml-cpp-dev nlohmann-json3-dev libssl-dev libseccomp-dev libmd4c-dev libboost-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERNRL_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH="$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
      -DCUDAToolkit_ROOT=/usr/local/cuda \
 && cmake --build /build \
 && cmake --install /build --prefix /opt/kernrl --strip

FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends libyaml-cpp0.7 libssl3 libseccomp2 libmd4c0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/kernrl /opt/kernrl
ENV PATH=/opt/kernrl/bin:${PATH} CUDA_HOME=/usr/local/cuda KERNRL_CACHE=/var/cache/kernrl
WORKDIR /work
ENTRYPOINT ["kernrl"]
CMD ["--help"]
