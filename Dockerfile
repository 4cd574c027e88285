# syntax=docker/dockerfile:1
# flowvision serve in a small CPU container: no PyTorch, no network needed at run time.
#   docker build -t flowvision-serve .
#   docker run --rm -p 8000:8000 flowvision-serve                       # the offline default model
#   docker run --rm -p 8000:8000 -v $PWD/ckpt:/models flowvision-serve \
#       --model resnet50 --checkpoint /models/resnet50.safetensors --max-batch 16
ARG PYTHON_VERSION=3.11

# ---- stage 1: build the wheel (C++ kernels compiled per ISA, chosen at import: the wheel runs on any x86-64)
FROM python:${PYTHON_VERSION}-slim-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ make cmake \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# ---- stage 2: the runtime, with only the wheel and its run-time dependencies
FROM python:${PYTHON_VERSION}-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    FLOWVISION_OFFLINE=1 \
    FLOWVISION_HOME=/home/app/.cache/flowvision
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir "$(ls /wheels/flowvision-*.whl)[serve]"
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin app
USER app
WORKDIR /home/app
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
# docker stop sends SIGTERM: the server stops accepting, finishes in-flight requests and exits 0
STOPSIGNAL SIGTERM
ENTRYPOINT ["flowvision", "serve", "--host", "0.0.0.0", "--port", "8000"]
CMD []
