# One image for every node; SERVICES chooses what a container runs.
# Secrets are never baked in: pass MASTER_KEY, SEED_MNEMONIC, CLUSTER_SECRET, NATS_PASSWORD as environment
# variables or, better, as Docker secrets with the *_FILE variant (e.g. MASTER_KEY_FILE=/run/secrets/master_key).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
RUN npm ci --omit=dev --ignore-scripts
COPY . .
# Node's compile cache, filled at build time (as `npm start` does on its first start): a node then never loads
# the TypeScript stripper, ~17 MB of RSS (docs/benchmarks.md, memory). Loading app.ts starts nothing.
ENV NODE_COMPILE_CACHE=/app/node_modules/.cache/node-compile-cache
RUN node --input-type=module -e "await import('./app.ts')" && chown -R node:node /app/node_modules/.cache
RUN mkdir -p /app/data && chown node:node /app/data && chmod 0700 /app/data
USER node
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/app/data
EXPOSE 3000
# the young generation capped at 2 × 8 MB, as `npm start` does (docs/benchmarks.md, memory)
CMD ["node", "--max-semi-space-size=8", "index.ts"]
