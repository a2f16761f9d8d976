/** The pages themselves: what each asks for and which API call it makes. */
import { page, pageRoute } from './layout'

const signInLink = '<p><a href="/pages/sign-in">Sign in</a></p>'
const pwdHint = 'Letters, digits and _ - . ~ ! only.'

export const signIn = pageRoute(
  page(
    'Sign in',
    'Sign in with your domain, login and password.',
    {
      method: 'POST',
      api: '/rest/v1/iam/sessions',
      submit: 'Sign in',
      success: 'You are signed in.',
      fields: [
        { name: 'domain', label: 'Domain', autocomplete: 'organization', required: true },
        { name: 'login', label: 'Login', autocomplete: 'username', required: true },
        { name: 'pwd', label: 'Password', type: 'password', autocomplete: 'current-password', required: true },
      ],
    },
    '<p id="whoami" hidden></p><p><button id="sign-out" type="button" hidden>Sign out</button></p><p><a href="/pages/forgot-password">Forgot your password?</a> · <a href="/pages/self-register">Register</a></p>',
  ),
)

export const forgotPassword = pageRoute(
  page(
    'Forgot your password?',
    'Give your login and domain, or your e-mail address; we will mail you a link to set a new password.',
    {
      method: 'POST',
      api: '/rest/v1/iam/pwd_reset_requests',
      submit: 'Send the link',
      success: 'If the account exists, a link is on its way to its e-mail address. It is valid for one hour.',
      fields: [
        { name: 'key', label: 'Login or e-mail address', autocomplete: 'username', required: true },
        { name: 'domain', label: 'Domain (needed with a login)', autocomplete: 'organization' },
      ],
    },
    signInLink,
  ),
)

export const resetPassword = pageRoute(
  page(
    'Set a new password',
    'Choose the new password for your account.',
    {
      method: 'PATCH',
      api: '/rest/v1/iam/pwd_reset_requests/{id}',
      submit: 'Set the password',
      success: 'Your password is set. You can sign in with it now.',
      fields: [
        {
          name: 'pwd',
          label: 'New password',
          type: 'password',
          autocomplete: 'new-password',
          required: true,
          hint: pwdHint,
        },
      ],
      confirmPassword: true,
      needsId: true,
    },
    signInLink,
  ),
)

export const acceptInvitation = pageRoute(
  page(
    'Accept the invitation',
    'Choose your password. You may also change your login and name; leave them empty to keep them.',
    {
      method: 'PATCH',
      api: '/rest/v1/iam/invites/{id}',
      submit: 'Accept',
      success: 'Welcome! Your account is ready. You can sign in now.',
      fields: [
        { name: 'login', label: 'Login (optional)', autocomplete: 'username' },
        { name: 'name', label: 'Name (optional)', autocomplete: 'name' },
        {
          name: 'pwd',
          label: 'Password',
          type: 'password',
          autocomplete: 'new-password',
          required: true,
          hint: pwdHint,
        },
      ],
      confirmPassword: true,
      needsId: true,
    },
    signInLink,
  ),
)

export const selfRegister = pageRoute(
  page(
    'Register',
    'Ask for an account in a domain that is open to registration. We will mail you a link to confirm it.',
    {
      method: 'POST',
      api: '/rest/v1/iam/self_register_requests',
      submit: 'Register',
      success: 'Check your e-mail: the confirmation link is valid for one day.',
      fields: [
        { name: 'domain', label: 'Domain', autocomplete: 'organization', required: true },
        { name: 'login', label: 'Login', autocomplete: 'username', required: true },
        { name: 'name', label: 'Name', autocomplete: 'name', required: true },
        { name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', required: true },
      ],
    },
    signInLink,
  ),
)

export const confirmRegistration = pageRoute(
  page(
    'Confirm your registration',
    'Choose the password of your new account.',
    {
      method: 'PATCH',
      api: '/rest/v1/iam/self_register_requests/{id}',
      submit: 'Create the account',
      success: 'Your account is ready. You can sign in now.',
      fields: [
        {
          name: 'pwd',
          label: 'Password',
          type: 'password',
          autocomplete: 'new-password',
          required: true,
          hint: pwdHint,
        },
      ],
      confirmPassword: true,
      needsId: true,
    },
    signInLink,
  ),
)
