# A ready coding image: Boris on a small Debian with bash, coreutils and git.
#   docker build -t boris .
#   docker run -p 8080:8080 -e BORIS_TOKEN=$(openssl rand -hex 32) -v "$PWD":/workspace boris
# The binary stage is what .ci/container-check builds on every change.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/boris ./cmd/boris

FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash coreutils git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /bin/bash agent \
 && mkdir /workspace && chown agent:agent /workspace
COPY --from=build /out/boris /usr/local/bin/boris
USER agent
WORKDIR /workspace
VOLUME /workspace
# Listening beyond loopback needs a token: set BORIS_TOKEN (or BORIS_TOKEN_FILE from a
# secret); without one Boris refuses to start.
ENV BORIS_HOST=0.0.0.0 BORIS_PORT=8080 BORIS_WORKDIR=/workspace
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${BORIS_PORT} && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"ok\"' <&3"]
ENTRYPOINT ["/usr/local/bin/boris"]
