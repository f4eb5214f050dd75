// tsc -p over several projects in one node process: `node tsc_batch.js A/tsconfig.json B/tsconfig.json ...`
// prints one JSON object {project: {"errors": n, "text": tsc's own diagnostics}}. The standard library's
// declarations (lib.dom.d.ts is most of tsc's time) are parsed once and shared by every project.
"use strict";
const path = require("path");
const ts = require(path.join(__dirname, "..", "..", "node_modules", "typescript"));

const libs = new Map(); // file name -> SourceFile, for the compiler's own lib files only
const out = {};
for (const project of process.argv.slice(2)) {
  const config = ts.getParsedCommandLineOfConfigFile(project, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const host = ts.createCompilerHost(config.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError, fresh) => {
    const lib = name.includes(`${path.sep}typescript${path.sep}lib${path.sep}`);
    if (lib && libs.has(name)) return libs.get(name);
    const file = read(name, lang, onError, fresh);
    if (lib && file) libs.set(name, file);
    return file;
  };
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, host });
  const diags = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
  const text = ts.formatDiagnostics(diags, {
    getCanonicalFileName: (f) => f, getCurrentDirectory: () => path.dirname(project), getNewLine: () => "\n",
  });
  out[project] = { errors: diags.length, text };
}
process.stdout.write(JSON.stringify(out));
