# One image for every node; SERVICES chooses what a container runs.
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
RUN npm ci --omit=dev --ignore-scripts
COPY . .
ENV HOST=0.0.0.0 PORT=3000
EXPOSE 3000
CMD ["node", "index.ts"]
