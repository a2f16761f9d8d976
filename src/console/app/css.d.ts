// The stylesheet imported by main.tsx: Bun.build emits it as the bundle's app.css.
declare module '*.css' {}
