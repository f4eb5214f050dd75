// tsc -p over several projects in one node process: `node tsc_batch.js A/tsconfig.json B/tsconfig.json::src/x.js ...`
// prints one JSON object {argument: {"errors": n, "text": tsc's own diagnostics}}. The standard library's
// declarations (lib.dom.d.ts is most of tsc's time) are parsed once and shared by every project. A project named
// with `::FILE` is checked in that one file only: the program holds the project's declaration files, FILE and
// what FILE imports, and only FILE's diagnostics are asked for (a type is checked where it is read).
"use strict";
const path = require("path");
const ts = require(path.join(__dirname, "..", "..", "node_modules", "typescript"));

const libs = new Map(); // file name -> SourceFile, for the compiler's own lib files only
const out = {};
for (const arg of process.argv.slice(2)) {
  const [project, only] = arg.split("::");
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
  const target = only && path.resolve(path.dirname(project), only);
  const roots = target ? [...config.fileNames.filter((f) => f.endsWith(".d.ts")), target] : config.fileNames;
  const program = ts.createProgram({ rootNames: roots, options: config.options, host });
  let diags;
  if (target) {
    const file = program.getSourceFile(target);
    if (!file) throw new Error(`${only} is not in ${project}`);
    diags = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  } else {
    diags = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
  }
  const text = ts.formatDiagnostics(diags, {
    getCanonicalFileName: (f) => f, getCurrentDirectory: () => path.dirname(project), getNewLine: () => "\n",
  });
  out[arg] = { errors: diags.length, text };
}
process.stdout.write(JSON.stringify(out));
