// mysql2 tries `require("cardinal")` (optional syntax highlighting for its debug output) inside a
// try/catch. The package is not installed; without this module the vitest pool logs the failed
// lookup twice for every test file that loads mysql2. Throwing here is what Node's require does.
throw new Error("Cannot find module 'cardinal' (optional, not installed)");
