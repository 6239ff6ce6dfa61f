# syntax=docker/dockerfile:1
# One image for every role (SVC_ROLE=all|api|worker).
# Build: docker build -t svc-server .    Run: see docker-compose.yml or deploy/.

# Node 24 LTS (maintained to April 2028; Node 20 reached its end of life in April 2026, Node 22 is
# maintained to April 2027). Its AsyncLocalStorage keeps the context in the continuation, without
# the promise hook Node 20 and 22 run for every promise (20-34 us a request here: the log
# context; docs/performance.md, "Where the request path's time goes"). CI also runs the unit tests
# and one end-to-end file on Node 22 and Node 24 (.ci/run).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: full install (dev deps for tsc), compile to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# msgpackr-extract ships prebuilt binaries for linux x64/arm64 (glibc); on other
# platforms npm falls back to node-gyp, which needs python3, make and g++ here.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# tsconfig compiles tests and benchmarks too; they have no place in the image.
RUN npm run build && rm -rf dist/test dist/bench dist/.tsbuildinfo

# ---- prod-deps: separate stage so it is cached on the lock file alone ----
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1 reaps zombies left by the assistant's Bash tool and MCP servers,
# and forwards SIGTERM to node, which drains and exits 0 within 10 s.
# bubblewrap is the Bash tool's sandbox; it needs user namespaces, which Docker's default
# seccomp profile refuses: without them Bash stays off (see the README, SVC_AGENT_BASH).
# chromium (Debian's, driven by playwright-core) is the AI browser's engine, with CJK fonts so
# Chinese and Japanese pages render in snapshots and the live view. Build with
# --build-arg WITH_CHROMIUM=0 for API-only images whose pages run in a remote browser
# (SVC_BROWSER_WS_ENDPOINT; docs/api/ai-browser.md, "Deployment").
ARG WITH_CHROMIUM=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini bubblewrap \
 && if [ "$WITH_CHROMIUM" = "1" ]; then \
      apt-get install -y --no-install-recommends chromium fonts-wqy-zenhei fonts-liberation; \
    fi \
 && rm -rf /var/lib/apt/lists/*

# MALLOC_ARENA_MAX=2: glibc's malloc otherwise keeps up to one arena per thread, and start-up's
# compiles (PGlite's WASM, the server's modules) leave ~40 MB of freed memory resident in them
# (docs/performance.md, "Memory").
# NODE_COMPILE_CACHE: V8's compiled code of the server and of its database thread is kept between
# starts of the container (the entry turns on the same cache for its own thread where it is unset).
ENV NODE_ENV=production \
    SVC_DATA_DIR=/data \
    PORT=8080 \
    MALLOC_ARENA_MAX=2 \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache

WORKDIR /app
# Code stays root-owned (read-only to the app); only /data is writable.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./

# Created and chowned before VOLUME so a fresh named volume inherits node's ownership.
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node
EXPOSE 8080

# No curl in slim images: probe with node itself. /healthz is unauthenticated and
# answers in every role, with or without SVC_BASE_PATH.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/server/main.js"]
