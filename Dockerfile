# syntax=docker/dockerfile:1
# IpcBench daemon and agent in one image: the daemon starts its BenchAgent subscribers as child processes.
#   docker build -t ipcbench .        (or: docker compose up --build, see docker-compose.yml)
# Three stages: the iceoryx2 binding (Rust), the .NET publish, and a runtime image with only what runs.

# 1. native/iceoryx2-ipcbench -> libipcbench_iox2.so. iceoryx2-pal-posix runs bindgen, which needs libclang.
#    Crates come from crates.io here (CI uses a vendored copy); Cargo.lock pins every version.
FROM rust:1-bookworm AS native
RUN apt-get update \
 && apt-get install -y --no-install-recommends libclang-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src/native/iceoryx2-ipcbench
COPY native/iceoryx2-ipcbench/ ./
RUN cargo build --release --locked

# 2. dotnet publish of the agent and the daemon into one directory (the daemon looks for BenchAgent beside itself).
#    The library built above goes where IpcBench.Iceoryx2.csproj expects it; Iox2SkipNativeBuild=true makes the
#    build use it instead of running cargo (the SDK image has no Rust toolchain). The daemon builds for the SDK's own RID
#    (ReadyToRun, BenchDaemon.csproj), so the scenario database's SQLite, Microsoft.Data.Sqlite's native e_sqlite3 for
#    this machine, is published beside it.
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
COPY . .
COPY --from=native /src/native/iceoryx2-ipcbench/target/release/libipcbench_iox2.so native/iceoryx2-ipcbench/target/release/
RUN dotnet publish src/BenchAgent/BenchAgent.csproj -c Release -o /app -p:Iox2SkipNativeBuild=true \
 && dotnet publish src/BenchDaemon/BenchDaemon.csproj -c Release -o /app -p:Iox2SkipNativeBuild=true \
 && test -f /app/libipcbench_iox2.so && test -x /app/BenchDaemon && test -x /app/BenchAgent \
 && test -f /app/libe_sqlite3.so

# 3. Runtime: ASP.NET Core (Kestrel for the control and metrics ports) includes the .NET runtime the agent needs.
FROM mcr.microsoft.com/dotnet/aspnet:10.0
WORKDIR /app
COPY --from=build /app ./
# Listen on every interface inside the container; publish the ports with -p / docker-compose.yml. Off loopback the
# control plane requires a bearer token, which is never baked into the image: pass it at run time, e.g.
#   docker run -e IPCBENCH_CONTROL_TOKEN="$(openssl rand -hex 32)" -p 50051:50051 ipcbench
# (or mount a 0400 file and set IpcBench__ControlTokenFile). Without one the daemon refuses to start, saying so.
ENV IpcBench__ControlAddress=0.0.0.0:50051 \
    IpcBench__MetricsAddress=0.0.0.0:9464 \
    IpcBench__RuntimeDirectory=/tmp/ipcbench \
    IpcBench__DatabasePath=/var/lib/ipcbench/scenarios.db \
    DOTNET_CLI_TELEMETRY_OPTOUT=1
EXPOSE 50051 9464
# The scenario database's directory, the app user's and private to it. docker-compose.yml mounts a named volume here:
# Docker gives a new volume the owner and mode of the image's directory, and a directory missing from the image would
# be root's, which the app user cannot write.
RUN mkdir -p /var/lib/ipcbench && chown "$APP_UID" /var/lib/ipcbench && chmod 700 /var/lib/ipcbench
# The image's unprivileged user (APP_UID, 1654); shared memory and sockets live in /dev/shm and /tmp.
USER $APP_UID
ENTRYPOINT ["/app/BenchDaemon"]
CMD ["serve"]
