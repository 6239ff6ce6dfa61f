import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const saved = localStorage.getItem('svc-theme');
if (saved === 'light' || saved === 'dark') document.documentElement.dataset.theme = saved;
render(<App />, document.getElementById('app')!);
