/** A form's value that cannot be sent, naming its field (the control marked `aria-invalid`). */
export class FieldError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message)
  }
}
