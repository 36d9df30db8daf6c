"""Shared word lists for the text heuristics (auto-tags, keywords, entity extraction)."""

from __future__ import annotations

# Matched case-insensitively on word boundaries; value is the display name. Companies whose name
# is also their product (OpenAI, Stripe) are organisations, in ORGANIZATIONS.
TECHNOLOGIES: dict[str, str] = {
    name.lower(): name
    for name in (
        "Python",
        "TypeScript",
        "JavaScript",
        "Java",
        "Kotlin",
        "C++",
        "C#",
        "Scala",
        "Elixir",
        "Haskell",
        "Node.js",
        "Deno",
        "React",
        "Next.js",
        "Vue",
        "Svelte",
        "Angular",
        "Vite",
        "Tailwind",
        "FastAPI",
        "Django",
        "Hono",
        "Spring Boot",
        "PostgreSQL",
        "Postgres",
        "MySQL",
        "SQLite",
        "MongoDB",
        "Redis",
        "Kafka",
        "RabbitMQ",
        "NATS",
        "JetStream",
        "Elasticsearch",
        "Meilisearch",
        "Qdrant",
        "pgvector",
        "tantivy",
        "FAISS",
        "Docker",
        "Kubernetes",
        "Helm",
        "Terraform",
        "Ansible",
        "Nginx",
        "Caddy",
        "AWS",
        "GCP",
        "Azure",
        "Cloudflare",
        "Vercel",
        "Netlify",
        "Linux",
        "macOS",
        "Windows",
        "Git",
        "GitHub",
        "GitLab",
        "gRPC",
        "GraphQL",
        "Protobuf",
        "OpenAPI",
        "WebSocket",
        "PyTorch",
        "TensorFlow",
        "ONNX",
        "Hugging Face",
        "LangChain",
        "Claude",
        "GPT-4",
        "Llama",
        "Ollama",
        "Prometheus",
        "Grafana",
        "OpenTelemetry",
        "Pydantic",
        "SQLAlchemy",
        "Alembic",
        "pytest",
        "Vitest",
        "Playwright",
        "Jest",
        "Webpack",
        "npm",
        "pnpm",
        "Poetry",
        "uv",
        "Zod",
        "Tokio",
        "Axum",
        "MCP",
        "JSON",
        "YAML",
        "SQL",
        "HTTP",
        "OAuth",
        "JWT",
        "Firebase",
        "PHP",
        "Lua",
        "Nuxt",
        "Fastify",
        "Laravel",
        "DynamoDB",
        "CSS",
        "HTML",
        "esbuild",
        "Rollup",
        "GPT",
        "LLM",
        "Figma",
        "Storybook",
        "Cypress",
        "Mocha",
        "Yarn",
        "Tauri",
        "Electron",
        "React Native",
    )
}
# Other spellings of the same technology.
TECHNOLOGIES |= {"nextjs": "Next.js", "nodejs": "Node.js"}
# Words that are ordinary English in lower case; only the capitalised form is the technology.
CASE_SENSITIVE_TECHNOLOGIES = (
    "Go", "Rust", "Spring", "Express", "Flask", "Remix", "Bun", "Phoenix", "Rails", "Swift",
    "Ruby", "Cargo", "Pip", "Brew", "Sass", "Expo", "REST",
)  # fmt: skip
ORGANIZATIONS = (
    "Google", "Microsoft", "Apple", "Amazon", "Meta", "Netflix", "OpenAI", "Anthropic",
    "GitHub", "GitLab", "Vercel", "Cloudflare", "Stripe", "Shopify", "Mozilla", "IBM", "Oracle",
    "Intel", "Nvidia", "AMD", "Samsung", "Hugging Face", "Mistral", "DeepMind", "Uber",
    "Airbnb", "Spotify", "Slack", "Atlassian", "Salesforce", "Twitter", "LinkedIn", "Red Hat",
    "Canonical", "Docker Inc", "HashiCorp", "Databricks", "Snowflake", "Supabase", "Render",
    "NVIDIA", "Tesla", "SpaceX", "Confluent", "PlanetScale", "Neon", "Fly.io", "Railway",
)  # fmt: skip
ORG_SUFFIXES = (
    "Inc", "Corp", "LLC", "Ltd", "Co", "Foundation", "Labs", "Studio", "Solutions", "Group",
    "Technologies", "Tech", "Systems", "Software",
)  # fmt: skip
AI_CONCEPTS = (
    "machine learning", "deep learning", "RAG", "retrieval augmented generation",
    "knowledge graph", "embedding", "embeddings", "vector search", "fine-tuning",
    "prompt engineering", "transformer", "large language model", "reinforcement learning",
    "semantic search", "hybrid search", "event sourcing", "microservices",
)  # fmt: skip
_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just let me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    use used using uses will shall may might must one two three new get got make made like also
    into onto per via etc still yet very really much many thing things way ways"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
