/** An alert as the API returns it: the domain's view, shared with the notifications' payloads. */
export { alertView } from "../../contracts/incident-views";
