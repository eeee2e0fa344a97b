export function memberView<R extends string>(row: { userEmail: string; role: R; createdAt: string }) {
  return { email: row.userEmail, role: row.role, created_at: row.createdAt };
}
