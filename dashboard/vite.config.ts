import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev` proxies the API to a gateway on :3210 (`exo up`); the build is static files
// the gateway serves itself.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", assetsDir: "assets", sourcemap: false, chunkSizeWarningLimit: 900 },
  server: {
    proxy: Object.fromEntries(
      ["/api", "/health", "/metrics"].map((p) => [p, "http://127.0.0.1:3210"]),
    ),
  },
});
