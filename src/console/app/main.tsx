/** The console's entry point: the stylesheet and the app, rendered into the shell's #app. */
import { render } from 'preact'
import { App } from './app'
import './console.css'

render(<App />, document.getElementById('app')!)
