# syntax=docker/dockerfile:1

# Compiles the TypeScript and bundles the admin console with the development dependencies; optional
# ones stay, since esbuild's binary for the platform is one of them.
FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
COPY migrations ./migrations
COPY console ./console
RUN npm run build

# Production dependencies only; the embedded Postgres binary is optional and not needed with DATABASE_URL.
FROM node:26-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:26-slim
# Metrics listen on every interface of the container so a scraper on its network reaches them;
# publish 3000 only, never 9464. The server never migrates: a one-shot container of this image runs
# `node dist/src/cli.js migrate` as the schema owner, and the server runs as a role without DDL rights.
ENV NODE_ENV=production \
    MIGRATE_ON_START=false \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["node", "dist/src/healthcheck.js"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/server.js"]
