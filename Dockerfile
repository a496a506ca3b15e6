# Conclave as an image: install and build once, run slim as a non-root user.
#   docker build -t conclave .
#   docker run -p 3000:3000 -v conclave-data:/data -e PUBLIC_BASE_URL=https://conclave.example.org conclave
#     (embedded SQLite store in /data). PUBLIC_BASE_URL is signed into every receipt: without it the
#     service names itself http://127.0.0.1:3000 and warns loudly at start.
#   add --ulimit nofile=65536:65536 for many clients: each connection holds a file descriptor.
# Several replicas behind nginx on Redis: docker compose up (docker-compose.yml).

# The current Node LTS line (26); the test suite runs on it in .ci/run (.ci/node-lts).
FROM node:26-trixie AS build
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 compiles here (build tools are in this stage only).
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY machines machines
COPY scripts scripts
# Compiles to dist/, bundles the pages' scripts into dist/public/ and the app into one module
# (dist/src/bundle/, what the entry loads once it listens), then drops the dev dependencies.
RUN npm run build && npm prune --omit=dev

FROM node:26-trixie-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# The guide: /guide renders these documents (src/http/guide-page.ts reads them beside dist/).
COPY docs docs
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Ready = the store answers (GET /readyz); the same probe compose and nginx rely on. The start
# period covers the start-up warm-up (WARMUP_TURNS; about 5 s alone on two cores, more when
# replicas warm up side by side on one host).
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
