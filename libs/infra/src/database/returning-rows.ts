/**
 * The rows of an `… RETURNING` statement run through `DataSource.query`: TypeORM's pg driver
 * answers INSERT with the rows and UPDATE/DELETE with `[rows, affectedCount]`.
 */
export function returningRows<T = Record<string, unknown>>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return Array.isArray(result) ? (result as T[]) : [];
}
