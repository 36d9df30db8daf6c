// Shapes of the answers the OpenAPI document leaves open (`additionalProperties: true`): the
// entity graph, its analysis, timeline and hierarchy reports. Declared once here, read
// defensively (every list may be missing).
import type { Memory } from "./client";

export interface Entity {
  id: string;
  namespace: string;
  name: string;
  type: string;
  aliases: string[];
  tags: string[];
  memory_count?: number;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface Relationship {
  source_id: string;
  target_id: string;
  relationship: string;
  confidence: number;
}

export interface GraphAnalysis {
  stats?: { nodes: number; edges: number; components: number; avg_degree: number; betweenness: string };
  centrality?: { id: string; name: string; type: string; betweenness: number; degree: number }[];
  bridges?: { id: string; name: string; betweenness: number; degree: number }[];
  communities?: { id: number; size: number; members: { id: string; name: string; type: string }[] }[];
}

export interface Brief {
  id: string;
  namespace: string;
  content: string;
  content_type: string;
  importance: number;
  tags: string[];
  created_at: string;
  superseded_by?: string | null;
}

export interface Day {
  date: string;
  count: number;
  memories?: Brief[];
}

export interface Theme extends Brief {
  month: string;
  episodes: Brief[];
}

export interface Epoch extends Brief {
  month: string;
  themes: Theme[];
}

export interface Hierarchy {
  epochs?: Epoch[];
  orphan_themes?: Theme[];
}

export type EntityMemory = Memory & { relevance: number };

export const list = <T,>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);
export const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" ? (value as Record<string, unknown>) : {};
