# Mandate as a small container image: one static binary (pure Go: the
# embedded SQLite store is modernc.org/sqlite, so no cgo), run as a non-root
# user. Build: docker build -t mandate .   (see docs/deploy.md)
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mandate ./cmd/mandate \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mandate /usr/local/bin/mandate
# The keys (and, without --store, the SQLite database) live in /data: mount a
# volume there. uid 65532 is distroless's "nonroot".
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
EXPOSE 7410
ENTRYPOINT ["/usr/local/bin/mandate"]
# Inside a container the listener must leave loopback to be reachable; put
# the reverse proxy (or the container network) in front, never the internet.
CMD ["serve", "--data", "/data", "--listen", "0.0.0.0:7410"]
