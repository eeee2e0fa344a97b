/** Most alert ids one alerts-by-filters request may name. */
export const MAX_REFS = 1000;
