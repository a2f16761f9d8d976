/** Text made safe to place in HTML, in element content and in quoted attributes. */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
