/** The hello-world Worker bench/api measures beside ours: no routing, no bindings. */
export default {
  fetch(): Response {
    return new Response("hello\n", { headers: { "content-type": "text/plain" } });
  },
};
