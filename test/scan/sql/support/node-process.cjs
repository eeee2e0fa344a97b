// workerd has no CommonJS `require("node:process")` (only the ES module and the global), so
// the vitest pool resolves mysql2's `require("process")` here: the global is the same object.
module.exports = globalThis.process;
