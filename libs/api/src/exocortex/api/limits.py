"""Every bound the REST API puts on a request, declared once.

The schemas in this package use them, the gateway's query and path parameters use them, and
the MCP adapter's tool arguments use them (or a tighter bound derived from them, with the
reason beside it).
"""

from __future__ import annotations

# Ids are ULIDs (26 characters); the bound leaves room without letting a path grow unbounded.
ID_MAX = 64
NAMESPACE_MAX = 128
# Namespaces named by a body that creates something (goals, entities): no spaces, no slashes.
NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
TAGS_MAX = 50
TAG_CHARS_MAX = 100
# provider, model_id, model_name, agent, session_id, conversation_id, project.
ATTRIBUTION_MAX = 200
SOURCE_URI_MAX = 2048
# A document's name or a file path in the server's import folder.
PATH_MAX = 4096

QUERY_MAX = 4000
SEARCH_LIMIT_MAX = 100
SEARCH_OFFSET_MAX = 10_000
# A token budget for packed results.
TOKENS_MIN = 100
TOKENS_MAX = 100_000
LINKED_MAX = 50

FEEDBACK_IDS_MAX = 20
BULK_IDS_MAX = 1000
IMPORT_MAX = 10_000
INGEST_FILES_MAX = 200

RECENT_LIMIT_MAX = 100
RECENT_OFFSET_MAX = 1_000_000
DIFF_LIMIT_MAX = 200
HIERARCHY_EPISODES_MAX = 100
TIMELINE_LIMIT_MAX = 365
SNAPSHOT_SECTION_MAX = 50
SNAPSHOT_DAYS_MAX = 365
PROJECT_NAME_MAX = 255

GOAL_TITLE_MAX = 500
GOAL_DESCRIPTION_MAX = 20_000
GOALS_LIMIT_MAX = 500
PROGRESS_MAX = 200_000
PROGRESS_LIMIT_MAX = 100
MILESTONE_ORDER_MAX = 1_000_000

ENTITY_NAME_MAX = 200
ALIASES_MAX = 50

# Maintenance: a job run is waited for this long by default, and at most this long.
MAINTENANCE_WAIT_DEFAULT = 20.0
MAINTENANCE_WAIT_MAX = 300.0
JOB_NAME_MAX = 64
JOB_NAME_PATTERN = r"^[a-z][a-z0-9-]*$"
# Run ids are Postgres bigints.
RUN_ID_MAX = 2**62
MAINTENANCE_LIST_MAX = 500
REGRESSION_RUNS_MAX = 100
CONTRADICTION_STATUS_MAX = 32
RESOLUTION_MAX = 2000
CONSOLIDATION_SIMILARITY_MIN = 0.5
CLUSTER_SIZE_MIN = 2
CLUSTER_SIZE_MAX = 100
CLUSTERS_MAX = 10_000
CONTRADICTION_SIMILARITY_MIN = 0.3
TAG_SIMILARITY_MIN = 0.5
TAG_SIMILARITY_MAX = 0.99
TAG_AUTO_MERGE_MAX = 100
TAG_SUGGESTIONS_MAX = 500
DAYS_MAX = 36_500
COUNT_MAX = 1_000_000

ANALYTICS_LIMIT_MAX = 100
SEARCH_MISS_DAYS_MAX = 90
KNOWLEDGE_GAP_DAYS_MAX = 365

BACKUP_NAME_MAX = 128
BACKUP_NAME_PATTERN = r"^exocortex-[0-9TZ]+(-scheduled)?\.exobak$"
PASSPHRASE_MIN = 8
PASSPHRASE_MAX = 1024
