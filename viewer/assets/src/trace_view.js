// The token view's page: what the app (viewer/ui/view_tab.py) and an exported file (viewer/export.py) call.
// The view is written one part per file (trace_view/, each importing the parts it uses); the build
// (viewer/assets/build.py) compiles it to one script defining `TraceView`.
export {mountInApp, mountExport} from "./trace_view/adapters.js";
