# perfgate's container image, for builds with a daemon (docker build, podman build,
# buildah). Without one, `make image` (go run ./scripts/image) builds the same
# filesystem with go-containerregistry as an OCI archive; scripts/image's tests check
# that this file says the same (user, paths, static binary).
#
#   docker build -t ghcr.io/perfgate/perfgate:dev .
#   docker run --rm ghcr.io/perfgate/perfgate:dev version

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: no cgo, so the binary needs no libc in the scratch image.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o /rootfs/usr/local/bin/perfgate ./cmd/perfgate
# The image's whole filesystem in /rootfs: the CA bundle, the non-root user perfgate
# (uid 65532, as distroless's nonroot) and its home, a world-writable /tmp.
RUN mkdir -p /rootfs/etc/ssl/certs /rootfs/home/perfgate /rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nperfgate:x:65532:65532:perfgate:/home/perfgate:/sbin/nologin\n' > /rootfs/etc/passwd \
 && printf 'root:x:0:\nperfgate:x:65532:\n' > /rootfs/etc/group \
 && chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=build /rootfs/ /
# COPY makes everything root's; the home is the user's.
COPY --from=build --chown=65532:65532 /rootfs/home/perfgate /home/perfgate
ENV PATH=/usr/local/bin HOME=/home/perfgate SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
LABEL org.opencontainers.image.title=perfgate \
      org.opencontainers.image.source=https://github.com/perfgate/perfgate
WORKDIR /home/perfgate
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/perfgate"]
