# syntax=docker/dockerfile:1
#
# Fjord in one static binary on a distroless base: no shell, no package
# manager, runs as the unprivileged "nonroot" user (uid 65532).
#
#   docker build -t fjord .
#   docker run --rm fjord --help
#
# deploy/compose/compose.yaml and deploy/kubernetes/ run this image; see
# docs/operations.md.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: a static binary that needs no libc in the image.
# -trimpath and -s -w: no build paths, no symbol tables (a smaller image).
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /fjord ./cmd/fjord \
 && mkdir -p /rootfs/var/lib/fjord

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /fjord /usr/local/bin/fjord
# The data directory belongs to nonroot, so a named volume mounted there
# starts out writable (Docker copies the mount point's owner into a new
# volume; Kubernetes needs fsGroup: 65532 instead).
COPY --from=build --chown=65532:65532 /rootfs/var/lib/fjord /var/lib/fjord
USER nonroot
WORKDIR /var/lib/fjord
# 9092 Kafka (PLAINTEXT), 9093 controller quorum (CONTROLLER),
# 8080 a broker's --http-addr (/healthz, /readyz, /metrics, /ui, /api/v1),
# 8083 a Connect worker's REST API (listeners=http://0.0.0.0:8083).
EXPOSE 9092 9093 8080 8083
ENTRYPOINT ["/usr/local/bin/fjord"]
CMD ["--help"]
