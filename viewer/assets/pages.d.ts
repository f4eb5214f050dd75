// What the pages' JavaScript meets beside the records and the server functions (contract.d.ts, generated from
// viewer/contract.py and viewer/server_api.py): the token view's request functions, the export's embedded data
// and the page globals. Written by hand; the records and the server functions are never restated here.

/** A record, or why there is none (`Refused`): `if (a.error)` tells them apart. */
type Answer<T> = (T & {error?: undefined}) | Refused;

/** Which chunk of tokens the token view asks for: a turn's scope, or a TRL training row's. */
interface ChunkQuery { turn: number; scope: string; index: number; row: number; }
/** The trainer panel's settings a trainer request names (the group's advantage is null outside a group). */
interface TrainerQuery { part: string; eps: [number, number]; advantage: number | null; }

/** What the token view asks for; the app (server functions) and an export (embedded data) each answer. */
interface TraceApi {
  chunk(q: ChunkQuery): Promise<Answer<Chunk>>;
  /** TRL's rows; with a recorded run's context, each row's fate beside it */
  training(run: RunContext | null): Promise<Training>;
  /** One turn's numbers, or with `summary` the rollout's and every turn's (viewer/ui/view_tab.py `trainer`). */
  trainer?(q: TrainerQuery & {summary: true}): Promise<Answer<TrainerSummary>>;
  trainer?(q: TrainerQuery & {turn: number}): Promise<Answer<TrainerTurn>>;
  export?(q: object): Promise<Answer<Exported>>;
  sibling?(k: number): void;
  cancelRun?(): void;
  onState?(s: {turn: number; mode: string; scope: string; found: string; part?: string}): void;  // found: "A-B" or "" (none)
  linkPart?(): string | null;  // the rescore part the page's link names (?part=), if any
}

/** An exported file's embedded data (viewer/export.py write_export). */
interface ExportData {
  opened: Opened;
  chunks: Record<string, Record<string, Record<string, Chunk>>>;  // scope -> turn or row -> chunk index
  training: Training;
  trainer: {summary: Record<string, TrainerSummary>; turns: Record<string, Record<string, TrainerTurn>>} | null;
  note: string | null;
}

interface Window {
  gradio_config?: {root?: string};
  __traceView?: object;  // the mounted view, for the browser tests
}

/** The token view's place on screen (viewer/assets/src/trace_view/mount.js): a plain object per mount. */
interface ViewPlace { turn: number; mode: string; scope: string; row: number; follow: boolean;
  found?: [number, number] | null; foundTurn?: number; }



