# One image for every node; SERVICES chooses what a container runs.
# Secrets are never baked in: pass MASTER_KEY, SEED_MNEMONIC, CLUSTER_SECRET, NATS_PASSWORD as environment
# variables or, better, as Docker secrets with the *_FILE variant (e.g. MASTER_KEY_FILE=/run/secrets/master_key).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
RUN npm ci --omit=dev --ignore-scripts
COPY . .
RUN mkdir -p /app/data && chown node:node /app/data && chmod 0700 /app/data
USER node
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/app/data
EXPOSE 3000
# the young generation capped at 2 × 8 MB, as `npm start` does (docs/benchmarks.md, memory)
CMD ["node", "--max-semi-space-size=8", "index.ts"]
