/** One page of a list, as the installer answers lists: everything on page 0. */
export function page<T>(elements: T[]): { elements: T[]; pageMetadata: { pageNumber: number; pageSize: number; totalElements: number; totalPages: number } } {
  return { elements, pageMetadata: { pageNumber: 0, pageSize: elements.length, totalElements: elements.length, totalPages: 1 } };
}
