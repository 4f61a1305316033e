# PostgreSQL and Redis for docs/compose.yaml, from the same Debian base as the app image
# (Debian's postgresql-15 and redis-server), so the stack builds where no image registry
# is reachable. Where one is, postgres:15-bookworm and redis:7-bookworm serve as well.
#
#   docker build --network host -f docs/services.Dockerfile --target postgres .
ARG BASE=debian:12-slim

FROM ${BASE} AS apt
ARG APT_SOURCES="deb http://deb.debian.org/debian bookworm main"
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get -o Acquire::Languages=none update

FROM apt AS postgres
# No cluster made at install: the entry point makes the one in PGDATA on first start.
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -f /etc/apt/sources.list.d/build.list && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql
COPY docs/postgres-start.sh /usr/local/bin/postgres-start
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
ENTRYPOINT ["postgres-start"]

FROM apt AS redis
RUN DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -f /etc/apt/sources.list.d/build.list && rm -rf /var/lib/apt/lists/*
USER redis
ENTRYPOINT ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no"]
