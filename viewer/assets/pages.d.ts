// What the pages' JavaScript meets beside the records (contract.d.ts, generated): the answers the server
// functions give besides a record, the token view's request functions, the export's embedded data and the
// page globals. Written by hand; the records themselves are never restated here.

/** A request a server function (viewer/ui/view_tab.py) or an export cannot answer, in words. */
interface Refused { error: string; }
/** A record, or why there is none: `if (a.error)` tells them apart. */
type Answer<T> = (T & {error?: undefined}) | Refused;

/** server.live's answer (viewer/ui/live.py): an encoded `Opened` when the rollout changed, else the record. */
interface LiveAnswer { live?: Live; opened?: string; error?: string; }

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

/** The token view's server functions (viewer/ui/view_tab.py): each names the rollout on screen by its key. */
interface ViewServer {
  chunk(q: ChunkQuery & {key: string | null}): Promise<Answer<Chunk>>;
  training(q: {key: string | null, run: RunContext | null}): Promise<Training>;
  trainer(q: TrainerQuery & {key: string | null; turn?: number; summary?: true}):
    Promise<Answer<TrainerTurn> | Answer<TrainerSummary>>;
  export(q: object): Promise<Answer<Exported>>;
  live(q: {run: string; rollout: number | null; version: number}): Promise<LiveAnswer>;
  live_cancel(q: {run: string}): Promise<unknown>;
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

/** What Gradio hands the collection index's js_on_load besides its element (viewer/ui/collection_view.py). */
interface IndexServer {
  index(req: {src: string; query: string}): Promise<IndexPage>;
  compare(req: {src: string; row: string | null; a: number; b: number; turn: number}): Promise<{compare?: Compare; error?: string}>;
}

/** server.find_summary's answer (viewer/ui/find_panel.py): the findings chart's data, or for a Hub source not
 *  indexed yet how many rollouts indexing would download (it waits for the visitor to ask). */
type FindSummaryAnswer = (FindSummary & {pending?: undefined}) | {pending: true; rollouts: number; error?: undefined} | Refused;
/** A search the panel asks server.find_search for (viewer/find/answers.py `search` checks every value). */
interface FindRequest {
  src: string; pattern: string; fields: string[]; versions: string; rule: string;
  first?: boolean;  // a run answers its first hits at once, with `resume` when there is more to count
  after?: number;   // the rest of a first answer: its `resume`
}

/** What Gradio hands the search panel's js_on_load besides its element (viewer/ui/find_panel.py). */
interface FindServer {
  find_summary(req: {src: string; build?: boolean}): Promise<FindSummaryAnswer>;
  find_search(req: FindRequest): Promise<SearchAnswer | Refused>;
}
