/** Vite's `?raw` imports (a file's text), which the tests use to read repository files. */
declare module "*?raw" {
  const text: string;
  export default text;
}
