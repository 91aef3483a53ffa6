# A ready coding image: Boris on a small Debian with bash, coreutils and git.
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" -t boris .
#   export BORIS_TOKEN="$(openssl rand -hex 32)"     # the client needs the same token
#   docker run --rm -p 127.0.0.1:8080:8080 -e BORIS_TOKEN \
#     --user "$(id -u):$(id -g)" -v "$PWD":/workspace boris
# Publish the port on 127.0.0.1 only, as above, unless other machines must reach it.
# --user runs commands as you, so that they can write your files; without it they run as
# the image's user `agent` (uid 10001). .ci/container-check builds and runs this image
# where a container builder is installed, and builds its binary stage everywhere.

# The Go release go.mod names, so that the build needs no toolchain download.
FROM golang:1.26.8-bookworm AS build
ARG VERSION=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/boris ./cmd/boris

FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash coreutils git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /bin/bash agent \
 && chmod 1777 /home/agent \
 && mkdir /workspace && chown agent:agent /workspace \
 && git config --system --add safe.directory '*'
# HOME is writable by whatever --user runs the image. git's ownership check
# (safe.directory) is off: the mounted workspace belongs to the host's user, and the
# agent runs commands in it anyway.
COPY --from=build /out/boris /usr/local/bin/boris
USER agent
ENV HOME=/home/agent
WORKDIR /workspace
VOLUME /workspace
# Listening beyond loopback needs a token: set BORIS_TOKEN (or BORIS_TOKEN_FILE from a
# secret); without one Boris refuses to start.
ENV BORIS_HOST=0.0.0.0 BORIS_PORT=8080 BORIS_WORKDIR=/workspace
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${BORIS_PORT} && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"ok\"' <&3"]
ENTRYPOINT ["/usr/local/bin/boris"]
