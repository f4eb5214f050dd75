// What the pages' JavaScript meets beside the records (contract.d.ts, generated): the answers the server
// functions give besides a record, the token view's request functions, the export's embedded data and the
// page globals. Written by hand; the records themselves are never restated here.

/** A request a server function (viewer/ui/view_tab.py) or an export cannot answer, in words. */
interface Refused { error: string; }
/** A record, or why there is none: `if (a.error)` tells them apart. */
type Answer<T> = (T & {error?: undefined}) | Refused;

/** server.live's answer (viewer/ui/live.py): an encoded `Opened` when the rollout changed, else the record. */
interface LiveAnswer { live?: Live; opened?: string; error?: string; }

/** What the token view asks for; the app (server functions) and an export (embedded data) each answer. */
interface TraceApi {
  chunk(q: {turn: number; scope: string; index: number; row: number}): Promise<Answer<Chunk>>;
  training(): Promise<Training>;
  trainer?(q: {part: string; eps: [number, number]; advantage: number; turn?: number; summary?: boolean}):
    Promise<any>;
  export?(q: object): Promise<Answer<Exported>>;
  sibling?(k: number): void;
  cancelRun?(): void;
  onState?(s: {turn: number; mode: string; scope: string; part?: string}): void;
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

/** The token view's place on screen (viewer/assets/trace_view/mount.js): a plain object per mount. */
interface ViewPlace { turn: number; mode: string; scope: string; row: number; follow: boolean;
  found?: [number, number] | null; foundTurn?: number; }

/** What Gradio hands the collection index's js_on_load besides its element (viewer/ui/collection_view.py). */
interface IndexServer {
  index(req: {src: string; query: string}): Promise<IndexPage>;
  compare(req: {src: string; row: string | null; a: number; b: number; turn: number}): Promise<{html?: string; error?: string}>;
}
