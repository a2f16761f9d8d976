/** An error said where it happened, read out at once (role alert); nothing when there is none. */
export function ErrorNote(props: { text: string | null | undefined }) {
  if (!props.text) return null
  return (
    <p class="error" role="alert">
      {props.text}
    </p>
  )
}
