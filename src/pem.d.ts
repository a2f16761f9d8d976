// PEM files imported as text (the development licence key), so a compiled binary carries them.
declare module '*.pem' {
  const text: string
  export default text
}
